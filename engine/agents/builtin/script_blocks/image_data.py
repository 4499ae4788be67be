"""The image DATA gene, part 3: the task's table read, its images found and turned into features.

In place of ``data.py`` when the task's rows are images: train.csv names the ids and labels, the
images sit in folders by id (``train/<id>.png``) or are named in a column; test.csv is optional
(the sample submission's ids name the test images). The same names as ``data.py`` come out, every
feature numeric, so the rest of a script does not change; the target, the labels and the split are
``data.py``'s own blocks (``target.py``, ``labels.py``, ``holdout_split.py``) at the insertion
points of the same names. Features are cached in the run's
evaluation folder (``../image_features``, beside each evaluation's own folder), so the search's
later scripts on the same rows and settings do not compute them again; where the sandbox keeps
that folder read-only, every script computes its own.
"""

# mypy: allow-untyped-defs
# The script's own imports come below its mark, after the linters' import of earlier names:
# ruff: noqa: I001

from engine.agents.builtin.script_blocks.image_features import (
    CONV_FILTERS,
    CONV_WIDTH,
    HOG_CELLS,
    IMAGE_FEATURE_MAKERS,
    PIXEL_SIZE,
)
from engine.agents.builtin.script_blocks.image_read import read_images
from engine.agents.builtin.script_blocks.names import SEED, np, os, pd

# --- script ---
import hashlib

train_df = pd.read_csv("./input/train.csv")
sample_sub = pd.read_csv("./input/sample_submission.csv")
ID_COL = sample_sub.columns[0]
test_df = pd.read_csv("./input/test.csv") if os.path.exists("./input/test.csv") else sample_sub[[ID_COL]].copy()
# insert target
# insert subsample
IMAGE_COLUMN = None  # a column naming each row's image file; None: found by id in the folders
TRAIN_IMAGES = "train"
TEST_IMAGES = "test"
IMAGE_SIZE = 32  # every image is read at this size a side
IMAGE_FEATURES = ["pixels"]
IMAGE_CACHE = os.path.join("..", "image_features")


def image_paths(df, folder):
    """Each row's image file: named in IMAGE_COLUMN, else the file of the folder whose stem is its id."""
    if IMAGE_COLUMN is not None and IMAGE_COLUMN in df.columns:
        return [os.path.join("./input", str(v)) for v in df[IMAGE_COLUMN]]
    base = os.path.join("./input", folder)
    by_stem = {os.path.splitext(name)[0]: name for name in sorted(os.listdir(base))}
    missing = [str(v) for v in df[ID_COL] if str(v) not in by_stem]
    if missing:
        raise FileNotFoundError(f"{len(missing)} ids have no image in {base}, e.g. {missing[:3]}")
    return [os.path.join(base, by_stem[str(v)]) for v in df[ID_COL]]


def compute_features(paths):
    images = read_images(paths, IMAGE_SIZE)
    return np.concatenate([IMAGE_FEATURE_MAKERS[name](images) for name in IMAGE_FEATURES], axis=1)


def image_features(paths):
    """The feature matrix of these images, from the run's cache when an earlier script made it."""
    settings = repr((IMAGE_SIZE, IMAGE_FEATURES, PIXEL_SIZE, HOG_CELLS, CONV_FILTERS, CONV_WIDTH, SEED,
                     [(p, os.path.getsize(p)) for p in paths]))
    cached = os.path.join(IMAGE_CACHE, hashlib.sha256(settings.encode()).hexdigest()[:32] + ".npy")
    if os.path.exists(cached):
        return np.load(cached)
    values = compute_features(paths).astype(np.float32)
    try:
        os.makedirs(IMAGE_CACHE, exist_ok=True)
        partial = f"{cached}.{os.getpid()}.npy"
        np.save(partial, values)
        os.replace(partial, cached)
    except OSError:
        pass  # a read-only run folder: this script computed its own
    return values


def feature_frame(values):
    return pd.DataFrame(values, columns=[f"fe_image_{i}" for i in range(values.shape[1])])


# Train and test images are read together: one size and one channel count for both.
TRAIN_PATHS = image_paths(train_df, TRAIN_IMAGES)
IMAGE_VALUES = image_features(TRAIN_PATHS + image_paths(test_df, TEST_IMAGES))
X = feature_frame(IMAGE_VALUES[:len(TRAIN_PATHS)])
X_test = feature_frame(IMAGE_VALUES[len(TRAIN_PATHS):])
FEATURES = list(X.columns)
BASE_NUM = list(X.columns)
DATE_PATTERN = ""
DATE_COLS: list = []
NAME_COLS: list = []
NAME_RANK_COLS: list = []
NUM_COLS = list(X.columns)
CAT_COLS: list = []
# insert labels
# insert split
