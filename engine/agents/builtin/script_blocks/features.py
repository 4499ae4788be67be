"""The row-wise features a DATA gene may ask for, one function each (``data.features``).

Each function's body goes into the script's ``add_features`` (``data.py``, ``# insert features``),
which reads a frame ``df`` and adds columns to ``out``; the file's order is the order the
options are offered and written in. Nothing is computed across rows, so nothing leaks.
"""

# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.names import BASE_NUM, DATE_COLS, DATE_PATTERN, FEATURES, NAME_COLS, np, pd


# --- script ---
def missing_count(df, out):
    out["fe_missing_count"] = df[FEATURES].isna().sum(axis=1)


def row_stats(df, out):
    num = df[BASE_NUM].astype(float)
    out["fe_row_mean"] = num.mean(axis=1)
    out["fe_row_std"] = num.std(axis=1)
    out["fe_row_max"] = num.max(axis=1)
    out["fe_row_min"] = num.min(axis=1)


def log1p(df, out):
    for col in BASE_NUM:
        values = df[col].astype(float)
        if values.min() >= 0:
            out[f"fe_log_{col}"] = np.log1p(values)


def dates(df, out):
    for col in DATE_COLS:
        # A text column whose training values look like dates becomes calendar numbers: as a
        # category, a test date never seen in training would be an unknown code.
        text = df[col].astype(str)
        stamp = pd.to_datetime(text.where(text.str.fullmatch(DATE_PATTERN)), errors="coerce", format="mixed")
        out[f"fe_{col}_year"] = stamp.dt.year
        out[f"fe_{col}_month"] = stamp.dt.month
        out[f"fe_{col}_dayofweek"] = stamp.dt.day_of_week
        out[f"fe_{col}_dayofyear"] = stamp.dt.day_of_year
        out[f"fe_{col}_hour"] = stamp.dt.hour + stamp.dt.minute / 60
        out[f"fe_{col}_days"] = (stamp - pd.Timestamp("1970-01-01")) / pd.Timedelta(days=1)


def name_words(df, out):
    for col in NAME_COLS:
        # A text column whose values nearly all differ (a name, a title) says nothing as a category:
        # out of fold its levels' target means are the prior. Its words often do: a maker comes first
        # ("chevrolet chevelle malibu", a solar module's maker and model), a kind last ("... Field").
        words = df[col].astype(str).where(df[col].notna()).str.lower().str.findall(r"[^\W\d_]+")
        out[f"{col}_first_word"] = words.str[0]
        out[f"{col}_last_word"] = words.str[-1]
        out[f"fe_{col}_words"] = words.str.len()


def interactions(df, out):
    for i, a in enumerate(BASE_NUM[:4]):
        for b in BASE_NUM[i + 1:4]:
            out[f"fe_{a}_x_{b}"] = df[a].astype(float) * df[b].astype(float)
