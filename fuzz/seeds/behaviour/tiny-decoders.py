exec(bytes.fromhex("696d706f7274206f73"))
exec("cvzcbeg bf"[::-1])
import codecs
exec(codecs.decode("vzcbeg bf", "rot13"))
