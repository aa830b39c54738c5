# Before `configfile:` reads config/config.yaml (where it exists; Snakemake
# reads it even beside --configfile): a malformed file stops the run in one
# line that names the file, the line and the column (Snakemake's own message
# names neither). Files given with --configfile are read by Snakemake before
# any of this.
import os
import sys

try:
    from matmulstudy.study.settings import read_config_file
    from matmulstudy.errors import StudyError
except ImportError:
    pass   # common.smk says how to install the package
else:
    if os.path.exists("config/config.yaml"):
        try:
            read_config_file("config/config.yaml")
        except StudyError as err:
            sys.exit(f"error: {err}")
