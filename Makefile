# One task runner; CI runs the same test command as the README (.ci/run).
.PHONY: lint typecheck test bench bench-overhead check

lint:
	ruff check src tests benchmarks scripts
	ruff format --check src tests benchmarks scripts

typecheck:
	mypy

test:
	python -m pytest -q -n 3 --dist loadgroup

bench:
	python benchmarks/local_decode.py

bench-overhead:
	python benchmarks/bench_overhead.py

check: lint typecheck test
