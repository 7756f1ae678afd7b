"""What the plot scripts share: matplotlib set up to draw into files, and a
figure written out as a PNG."""
import os
import sys


def pyplot(reexec=True):
    """matplotlib.pyplot on the Agg backend. Debian's python3-matplotlib lives
    under /usr/bin/python3; when another python3 first on PATH (pyenv, venv)
    lacks it and `reexec` is set, the script runs itself again under that one."""
    try:
        import matplotlib
    except ImportError:
        system = "/usr/bin/python3"
        if reexec and os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system):
            os.execv(system, [system] + sys.argv)
        raise
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(plt, fig, out_dir, name, dpi=120):
    """Writes `fig` to out_dir/name, closes it and returns the path."""
    path = os.path.join(out_dir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
