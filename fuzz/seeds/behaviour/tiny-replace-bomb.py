s = "aa"
t = s.replace("a", s)
t = t.replace("a", t)
t = t.replace("a", t)
exec(t)
