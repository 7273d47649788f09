"""Prints one line naming the CPU the tests or a benchmark run on: its model, the flags that decide which kernels
oneDNN picks, the ISA oneDNN uses (capped by ONEDNN_MAX_CPU_ISA) and the target of Kiln's own kernels
(kiln.runtime.cpu_info). run.sh prints it before the Python tests; quote it beside every figure."""
from kiln import runtime


def main():
    i = runtime.cpu_info()
    cap = i["onednn_max_cpu_isa"]
    print(f"CPU: {i['model'] or 'unknown'}; flags: {' '.join(i['flags']) or '(unreadable)'}; oneDNN ISA: "
          f"{i['onednn_isa']}{f' (ONEDNN_MAX_CPU_ISA={cap})' if cap else ''}; Kiln kernels: {i['kiln_kernels']}")


if __name__ == "__main__":
    main()
