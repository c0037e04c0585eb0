"""System track: MLPerf LoadGen scenarios, timing, power meters, the ASC benchmark."""
