"""The DATA gene, part 1b (tasks with free-text columns only): TF-IDF and linear models, stacked.

Goes in at ``data.py``'s ``# insert free_text`` when the gene has a ``text`` setting (the agent gives one
to a task whose files hold a free-text column, ``engine/agents/builtin/text_task.py``). Each text
column is read as word (1-2) and character (2-5) n-gram TF-IDF, sublinear, its vocabulary bounded
by the rows, the text's size and the time left. A linear model (complement naive Bayes, logistic,
ridge or linear SVM, the last two with calibrated probabilities) learns from it; its out-of-fold
predictions replace the text columns as numeric ``fe_text_*`` columns, so the tabular learner
stacks them with the table's other columns (on a table of text alone, it reads the linear
model's predictions). ``TEXT_MODEL = "auto"`` picks the linear model whose out-of-fold
predictions score best on the task's metric.

Nothing of an evaluation's working directory outlives it (each evaluation gets a fresh one), so
the extraction is cached only inside a script: an ablation study's variants share it.
"""

# The block imports the clock itself, below its names (I001): an ablation study renders it inside a
# function that imports time further down, which would make the name local to the whole function.
# ruff: noqa: I001
# mypy: allow-untyped-defs
# Scripts carry no annotations: their empty collections are filled further down.
# mypy: disable-error-code="var-annotated"

from engine.agents.builtin.script_blocks.names import (
    CAT_COLS,
    DATE_COLS,
    GREATER_IS_BETTER,
    NUM_COLS,
    SEED,
    TASK_KIND,
    KFold,
    LogisticRegression,
    Ridge,
    StratifiedKFold,
    X,
    X_test,
    clone,
    cross_val_predict,
    np,
    pd,
    score_predictions,
    stratify,
    test_df,
    text_columns,
    train_df,
    y,
)

# --- script ---
import os
import time

TEXT_MODEL = "auto"  # nb, logistic, ridge or svm; auto: the one whose out-of-fold predictions score best
TEXT_NGRAMS = "word+char"  # word, char or word+char
TEXT_VOCABULARY = 30000  # at most this many n-grams of each kind, fewer on few rows or little time
# Free text as engine/tasks/columns.py reads it: long on average and mostly distinct.
TEXT_COLS = [c for c in text_columns(lambda seen: seen.str.len().mean() >= 30 and seen.nunique() >= 0.5 * len(seen))
             if c not in DATE_COLS]


# The share of the time left that weighing the linear models may take; past it, no further one.
TEXT_SHARE = 0.3
# What the cheapest path costs per character of text on 2 busy cores: 20,000 short reviews
# (1.2 M characters) took 10 s to extract as words and characters and 23 s for five folds of
# calibrated ridge (the linear SVM 81 s, logistic regression 153 s).
TEXT_S_PER_CHAR = 27e-6
TEXT_STARTED = time.time()
TEXT_LEFT_S = float(os.environ.get("ENGINE_EVAL_DEADLINE", "inf")) - TEXT_STARTED


def short_of_time(train_text, test_text):
    """Whether the cheapest path through the text would take more than its share of the time left.
    Short of time, the text is read as words only (character n-grams cost most of the extraction),
    with a quarter of the vocabulary and three folds. Judged by the work the text makes, not by the
    seconds left alone, so that a small task's final script, which runs with the least time of
    any, reads its text as its validated scripts did."""
    chars = int(train_text.str.len().sum() + test_text.str.len().sum())
    return chars * TEXT_S_PER_CHAR > TEXT_SHARE * TEXT_LEFT_S


def text_vocabulary(rows, short):
    """Ten n-grams a row at most, a quarter as many short of time: the vectorizers and the linear
    fits cost in proportion to the columns they make."""
    return max(2000, min(TEXT_VOCABULARY, 10 * rows) // (4 if short else 1))


def ngrams_read(short):
    """The n-grams the text is read as: the setting's, but words alone when short of time."""
    return "word" if short and "word" in TEXT_NGRAMS else TEXT_NGRAMS


def text_matrix(train_text, test_text, short):
    """Word and character TF-IDF of train and test rows, fitted on both: no label is read."""
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import TfidfVectorizer

    vocabulary = text_vocabulary(len(train_text), short)
    settings = []
    if "word" in ngrams_read(short):
        settings.append({"analyzer": "word", "ngram_range": (1, 2), "token_pattern": r"(?u)\b\w+\b"})
    if "char" in ngrams_read(short):
        settings.append({"analyzer": "char_wb", "ngram_range": (2, 5)})
    both = pd.concat([train_text, test_text]).fillna("").astype(str).str.lower()
    parts = [TfidfVectorizer(sublinear_tf=True, min_df=2, max_features=vocabulary, dtype=np.float32,
                             **setting).fit_transform(both) for setting in settings]
    matrix = hstack(parts).tocsr()
    return matrix[:len(train_text)], matrix[len(train_text):]


def text_model(name):
    """The linear model ``name`` names, unfitted; on regression the SVM is a linear SVR, and
    logistic regression and naive Bayes (which have no regression form) are ridge."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.linear_model import RidgeClassifier
    from sklearn.naive_bayes import ComplementNB
    from sklearn.svm import LinearSVC, LinearSVR

    if TASK_KIND != "classification":
        return LinearSVR(C=0.3, dual="auto", random_state=SEED, max_iter=3000) if name == "svm" else Ridge(alpha=1.0)
    if name == "logistic":
        return LogisticRegression(C=8.0, max_iter=500)
    if name == "nb":
        # Complement naive Bayes: near free, and on a few hundred texts a class often the best.
        return ComplementNB(alpha=0.3)
    # Margins are not probabilities: a three-fold sigmoid calibration makes them so.
    margin = LinearSVC(C=0.3, dual="auto", random_state=SEED) if name == "svm" else RidgeClassifier(alpha=1.0)
    return CalibratedClassifierCV(margin, cv=3, method="sigmoid")


def text_candidates():
    """The linear models to weigh: the one the gene names, or all that fit the task. Calibration
    folds need three rows of every class in each training fold."""
    if TEXT_MODEL != "auto":
        return [TEXT_MODEL]
    if TASK_KIND != "classification":
        return ["ridge", "svm"]
    # Cheapest first: with little time only the first ones are weighed (text_predictions).
    return ["nb", "ridge", "svm", "logistic"] if np.bincount(y).min() >= 20 else ["nb", "logistic"]


def text_predictions(train_matrix, test_matrix, short):
    """(out-of-fold train predictions, test predictions, model name) of the best candidate."""
    classes = TASK_KIND == "classification"
    folds = (StratifiedKFold if stratify is not None else KFold)(3 if short else 5, shuffle=True, random_state=SEED)
    method = "predict_proba" if classes else "predict"
    tried = []
    last_s = 0.0
    for name in text_candidates():
        # The next model costs at least what the last did (cheapest first): weigh it only if that fits.
        if tried and time.time() + last_s - TEXT_STARTED > TEXT_SHARE * TEXT_LEFT_S:
            break
        began = time.time()
        oof = cross_val_predict(text_model(name), train_matrix, y, cv=folds, method=method)
        last_s = time.time() - began
        score = score_predictions(y, oof)
        tried.append((score if GREATER_IS_BETTER else -score, -len(tried), name, oof))
    _, _, name, oof = max(tried, key=lambda found: found[:2])  # a tie goes to the first tried
    fitted = clone(text_model(name)).fit(train_matrix, y)
    test = fitted.predict_proba(test_matrix) if classes else fitted.predict(test_matrix)
    return oof, test, name


def text_columns_stacked(train_text, test_text):
    """The out-of-fold predictions as columns, computed once per script for the same rows and
    settings (an ablation study renders this gene once per variant)."""
    cache = globals().setdefault("TEXT_CACHE", {})
    key = (TEXT_MODEL, TEXT_NGRAMS, TEXT_VOCABULARY, int(pd.util.hash_pandas_object(train_text).sum()),
           int(pd.util.hash_pandas_object(test_text).sum()), hash(np.asarray(y).tobytes()))
    if key not in cache:
        short = short_of_time(train_text, test_text)
        train_matrix, test_matrix = text_matrix(train_text, test_text, short)
        oof, test, name = text_predictions(train_matrix, test_matrix, short)
        oof, test = np.asarray(oof, dtype=float), np.asarray(test, dtype=float)
        if oof.ndim == 1:
            oof, test = oof[:, None], test[:, None]
        elif oof.shape[1] == 2:
            oof, test = oof[:, 1:], test[:, 1:]  # binary: one class's probability says it all
        names = [f"fe_text_{i}" for i in range(oof.shape[1])]
        cache[key] = (pd.DataFrame(oof, columns=names), pd.DataFrame(test, columns=names), name)
        print(f"Text features: {', '.join(TEXT_COLS)} -> {name} on TF-IDF ({ngrams_read(short)})")
    return cache[key]


if TEXT_COLS:
    text_train = train_df[TEXT_COLS].fillna("").astype(str).agg(" | ".join, axis=1)
    text_test = test_df[TEXT_COLS].fillna("").astype(str).agg(" | ".join, axis=1)
    text_oof, text_test_pred, _ = text_columns_stacked(text_train, text_test)
    X = pd.concat([X.drop(columns=TEXT_COLS).reset_index(drop=True), text_oof], axis=1)
    X_test = pd.concat([X_test.drop(columns=TEXT_COLS).reset_index(drop=True), text_test_pred], axis=1)
    NUM_COLS = [c for c in X.columns if c in NUM_COLS or str(c).startswith("fe_")]
    CAT_COLS = [c for c in CAT_COLS if c not in TEXT_COLS]
