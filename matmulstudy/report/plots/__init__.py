"""The report's figures, drawn with seaborn from a study's tables.

Each drawing function draws one figure of a Study (its tables and its own
registry) into stem.png and stem.svg; report/figures.py lists them, naming
each function as it is exported here. Every figure takes the order, labels
and colours of the variants from the study's registry (style.py), shows
medians with the interquartile range of the samples, and marks measurements
that failed verification instead of plotting them.

progression  the bars of the progression, one precision's chapters at a time
samples      GFLOP/s against size, timing noise, verification margins
efficiency   fractions of the reference and of the peak, the roofline, the best step by size
counters     what explains each step (resources, instruction mix, ncu)
power        each GPU variant back to back: its speed against its power
gpus         every committed GPU side by side
"""

from .counters import hardware
from .efficiency import best_by_size, efficiency, roofline
from .gpus import by_gpu
from .power import power
from .progression import chapter_progression, progression, progression_int32
from .samples import margin, size_sweep, timing
from .style import markers, palette, placeholder

__all__ = ["best_by_size", "by_gpu", "chapter_progression", "efficiency", "hardware", "margin", "markers", "palette",
           "placeholder", "power", "progression", "progression_int32", "roofline", "size_sweep", "timing"]
