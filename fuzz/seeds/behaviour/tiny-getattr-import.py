f = getattr(__import__("o" + "s"), "sys" + "tem")
f(bytes([105, 100]).decode())
