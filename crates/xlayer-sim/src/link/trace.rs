//! Trace-driven link directions in the Mahimahi format (in progress).
