"""The run store on disk: names derived from configs, atomic writes, one writer per run
(locks), and the files of a run (metrics, counts, checkpoints, status)."""
