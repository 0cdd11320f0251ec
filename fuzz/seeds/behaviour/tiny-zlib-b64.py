import base64, zlib
exec(zlib.decompress(base64.b64decode("eJzLzC3ILypRyC/myi/WK64sLknN1VDKTFHSBAB6Swi/")))
