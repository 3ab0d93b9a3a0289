"""Built-in demo clusters."""

from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parent
DEMO_CLUSTER = DEMO_DIR / "demo-cluster.yaml"
