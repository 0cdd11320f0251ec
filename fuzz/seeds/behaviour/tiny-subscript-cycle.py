cfg = {"k": cfg["k"]}
exec(cfg["k"] if cfg else cfg)
