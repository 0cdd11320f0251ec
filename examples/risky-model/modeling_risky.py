import os


class RiskyModel:
    def __init__(self):
        os.system("echo loaded")
