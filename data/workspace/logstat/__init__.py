"""logstat: small reports over web server access logs (Combined Log Format)."""

from .parse import ParseError, Record, parse_line, parse_lines
from .report import status_counts, top_paths, render_top_paths, render_status

__all__ = [
    "ParseError",
    "Record",
    "parse_line",
    "parse_lines",
    "status_counts",
    "top_paths",
    "render_top_paths",
    "render_status",
]
__version__ = "0.4.0"
