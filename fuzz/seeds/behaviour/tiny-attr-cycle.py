class C:
    x = C.x
    def f(self):
        self.y = self.y + "a"
        exec(self.y)
