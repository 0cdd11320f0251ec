a = c
b = a
c = b
eval(c)
