x = "".join([x, "a"])
exec(x)
