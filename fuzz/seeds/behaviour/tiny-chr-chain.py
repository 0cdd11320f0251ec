import os
os.system(chr(105)+chr(100)+chr(32)+chr(59))
