x = "a" * 99999999
y = "%99999999s" % x
z = "{:>99999999}".format(y)
exec(x.ljust(9999999).center(999999999).zfill(99999))
