package float80
