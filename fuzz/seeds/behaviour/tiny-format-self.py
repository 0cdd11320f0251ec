x = "%s" % x
exec(x)
