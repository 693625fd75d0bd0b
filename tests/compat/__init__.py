"""The 0.3.0a5 compatibility suite's helpers: the public-API snapshot and its check
(:mod:`compat.api_snapshot`), the programs' runner (:mod:`compat.runner`) and the local
embeddings / rerank endpoint (:mod:`compat.aux_server`). The programs themselves are plain
scripts under ``programs/``."""
