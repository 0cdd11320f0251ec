line = line.rstrip()
exec(line)
