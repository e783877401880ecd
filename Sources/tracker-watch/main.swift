print("tracker-watch: not built yet")
