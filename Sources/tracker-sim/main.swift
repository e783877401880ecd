print("tracker-sim: not built yet")
