"""The script execution harness (spec 02, REQ-EX-*): working directories, running scripts as
subprocesses with timeouts and resource limits, reading their results, and the evaluation
executor the engine calls for ``EvaluationRequested`` effects."""

from engine.harness.environment import build_execution_env, detect_gpu_info, is_secret_name
from engine.harness.evaluate import (
    CodeEvaluation,
    ExecutorStrategy,
    evaluate_code,
    evaluate_solution,
    is_better_solution,
    rank_solutions,
)
from engine.harness.executor import EvalContext, eval_dir_for, run_evaluation
from engine.harness.output import CappedBuffer
from engine.harness.process import ProcessOutcome, execute_script, run_process
from engine.harness.results import (
    build_evaluation_result,
    detect_error,
    error_text,
    extract_traceback,
    parse_score,
    rejected_result,
)
from engine.harness.script import ScriptRejected, detect_error_masking, validate_script_content, write_script
from engine.harness.submission import check_submission, get_submission_info, verify_submission
from engine.harness.workdir import (
    clean_output_directory,
    populate_inputs,
    prepare_evaluation_directory,
    safe_dir_name,
    setup_working_directory,
)

__all__ = [
    "CappedBuffer",
    "CodeEvaluation",
    "EvalContext",
    "ExecutorStrategy",
    "ProcessOutcome",
    "ScriptRejected",
    "build_evaluation_result",
    "build_execution_env",
    "check_submission",
    "clean_output_directory",
    "detect_error",
    "detect_error_masking",
    "detect_gpu_info",
    "error_text",
    "eval_dir_for",
    "evaluate_code",
    "evaluate_solution",
    "execute_script",
    "extract_traceback",
    "get_submission_info",
    "is_better_solution",
    "is_secret_name",
    "parse_score",
    "populate_inputs",
    "prepare_evaluation_directory",
    "rank_solutions",
    "rejected_result",
    "run_evaluation",
    "run_process",
    "safe_dir_name",
    "setup_working_directory",
    "validate_script_content",
    "verify_submission",
    "write_script",
]
