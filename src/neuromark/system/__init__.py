"""System track: MLPerf LoadGen scenarios, timing, power meters, SUTs, the submission checker."""
