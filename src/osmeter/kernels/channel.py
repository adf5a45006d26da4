"""The guest's data channel, decoded (docs/probe-init.md, "Frames").

The probe as init writes its commands' output to the guest's second serial
port (ttyS1; the kernel's console is ttyS0, so kernel messages never land
in it), one frame per line:

    @osm1 SEQ KIND CMD LEN CRC PAYLOAD

SEQ counts frames from 0, LEN is the payload's length in bytes and CRC its
CRC-32 (zlib's), so a lost, cut or garbled frame is found, never read as a
figure. KIND: H hello, O/o a stdout line (o: a piece, continued), E/e
stderr, X a command's end (`exit N` or `signal N`), L init's own message,
D done. Anything else in the channel is noise, counted and reported.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

MAGIC = b"@osm1 "
KINDS = frozenset("HOoEeXLD")


@dataclass
class Command:
    """One plan command's output, as the frames gave it."""

    stdout: list[bytes] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    ended: str | None = None  # "exit N" / "signal N"
    _out_part: bytearray = field(default_factory=bytearray)
    _err_part: bytearray = field(default_factory=bytearray)

    @property
    def exit_code(self) -> int | None:
        if self.ended and self.ended.startswith("exit "):
            return int(self.ended.split()[1])
        return None


@dataclass
class Decoded:
    hello: str | None = None
    commands: dict[int, Command] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)  # L frames: init's own
    done: bool = False
    frames: int = 0
    problems: list[str] = field(default_factory=list)  # bad frames, lost ones, noise

    def command(self, index: int) -> Command:
        return self.commands.setdefault(index, Command())

    def finished(self) -> int:
        return sum(1 for c in self.commands.values() if c.ended is not None)


def _frame(line: bytes) -> tuple[int, str, int, bytes] | str:
    """(seq, kind, cmd, payload) of one line, or why it is not a good frame."""
    if not line.startswith(MAGIC):
        return "noise"
    parts = line[len(MAGIC):].split(b" ", 5)
    if len(parts) < 5:
        return "a frame cut short"
    if len(parts) == 5:
        parts.append(b"")
    seq_t, kind_t, cmd_t, len_t, crc_t, payload = parts
    try:
        seq, cmd, length, crc = int(seq_t), int(cmd_t), int(len_t), int(crc_t, 16)
        kind = kind_t.decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return "a frame with a malformed header"
    if kind not in KINDS or len(crc_t) != 8:
        return "a frame with a malformed header"
    if len(payload) != length:
        return f"frame {seq}: {len(payload)} bytes, its header says {length}"
    if zlib.crc32(payload) != crc:
        return f"frame {seq}: its checksum does not match"
    return seq, kind, cmd, payload


def decode(data: bytes) -> Decoded:
    """Every frame of the channel's bytes; what is wrong goes to `problems`."""
    out = Decoded()
    expected = 0
    noise = 0
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:  # the guest stopped mid-frame
        out.problems.append("the channel ends in the middle of a frame")
        lines.pop()
    for line in lines:
        got = _frame(line.rstrip(b"\r"))
        if got == "noise":
            noise += 1
            continue
        if isinstance(got, str):
            out.problems.append(got)
            expected += 1
            continue
        seq, kind, cmd, payload = got
        if seq != expected:
            out.problems.append(f"frames {expected} to {seq - 1} are missing" if seq > expected
                                else f"frame {seq} comes again after frame {expected - 1}")
        expected = seq + 1
        out.frames += 1
        _apply(out, kind, cmd, payload)
    if noise:
        out.problems.append(f"{noise} line(s) in the channel were not frames")
    return out


def _apply(out: Decoded, kind: str, cmd: int, payload: bytes) -> None:
    text = payload.decode("utf-8", errors="replace")
    if kind == "H":
        out.hello = text
    elif kind == "L":
        out.messages.append(text)
    elif kind == "D":
        out.done = True
    elif kind == "X":
        out.command(cmd).ended = text
    elif kind in "Oo":
        c = out.command(cmd)
        c._out_part += payload
        if kind == "O":
            c.stdout.append(bytes(c._out_part))
            c._out_part.clear()
    else:  # E / e
        c = out.command(cmd)
        c._err_part += payload
        if kind == "E":
            c.stderr.append(c._err_part.decode("utf-8", errors="replace"))
            c._err_part.clear()
