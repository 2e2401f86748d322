"""What every bench prints next to its figures: the CPU and how busy the machine is (shared by the bench scripts)."""
import os, platform


def cpu_model() -> str:
    "The CPU model name (from /proc/cpuinfo on Linux, else what platform knows)."
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'): return line.split(':', 1)[1].strip()
    except OSError: pass
    return platform.processor() or platform.machine()


def load() -> str:
    "The 1, 5 and 15 minute load averages ('n/a' where the OS has none): above the core count, figures are noisy."
    try: return ' '.join(f"{v:.2f}" for v in os.getloadavg())
    except (OSError, AttributeError): return 'n/a'
