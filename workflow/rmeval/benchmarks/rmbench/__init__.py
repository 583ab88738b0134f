"""RM-Bench (Liu et al., ICLR 2025; THU-KEG/RM-Bench): each prompt's three chosen and three rejected responses in
three styles, scored by the official 3 x 3 style matrix (easy / normal / hard per domain)."""
