x = "{}".format(x)
exec(x)
