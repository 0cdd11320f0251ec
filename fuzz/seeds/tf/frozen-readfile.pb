

aReadFile