x = (x + "a").strip()
x = x.replace("a", x)
exec(f"{x.upper()}")
