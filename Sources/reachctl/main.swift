print("reachctl")
