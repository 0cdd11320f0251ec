a = b.strip()
b = a.lower()
exec(a)
