"""Per-trial overhead of Optuna with SQLite storage on a no-op objective.

Prints the median seconds between consecutive trial completions, which is
Optuna's own cost per trial (the objective does nothing).
  python3 optuna_trial.py N DB_PATH
"""
import statistics
import sys
import time

import optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)


def main():
    n = int(sys.argv[1])
    db = sys.argv[2]
    study = optuna.create_study(storage=f"sqlite:///{db}", direction="minimize",
                                sampler=optuna.samplers.RandomSampler(seed=0))
    stamps = []

    def objective(trial):
        x = trial.suggest_float("x", -10, 10)
        return x * x

    def on_done(study, trial):
        stamps.append(time.monotonic())

    study.optimize(objective, n_trials=n, callbacks=[on_done])
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    print(f"{statistics.median(gaps):.6f}")


if __name__ == "__main__":
    main()
