"""Test helpers shared by the scheduler's tests (mirrors pkg/scheduler/testing)."""
