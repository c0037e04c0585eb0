"""neuromark's EVT 2.0 / EVT 3.0 decoders on words built by hand from Prophesee's published
layouts (https://docs.prophesee.ai/stable/data/encoding_formats/evt3.html and evt2.html):
each rule of the layout gets its own stream, and the expected events are written out by
hand, not taken from another decoder."""

from __future__ import annotations

import numpy as np
import pytest

from neuromark.data.prophesee_evt import DecodeProblem, decode_evt2, decode_evt3


# ---- EVT 3.0 words (16 bits: type in [15:12]) ------------------------------------------------
def addr_y(y, system=0):
    return 0x0000 | (system << 11) | y


def addr_x(x, p):
    return 0x2000 | (p << 11) | x


def vect_base(x, p):
    return 0x3000 | (p << 11) | x


def vect12(mask):
    return 0x4000 | mask


def vect8(mask):
    return 0x5000 | mask


def time_low(v):
    return 0x6000 | v


def time_high(v):
    return 0x8000 | v


def trigger(channel, value):
    return 0xA000 | (channel << 8) | value


def others(sub):
    return 0xE000 | sub


def continued4(v):
    return 0x7000 | v


def continued12(v):
    return 0xF000 | v


def evt3(*words):
    d = decode_evt3(np.array(words, np.uint16))
    return [(int(t), int(x), int(y), int(p)) for t, x, y, p in zip(d.t, d.x, d.y, d.p)], d


def test_evt3_single_events_time_and_polarity():
    got, d = evt3(time_high(5), time_low(7), addr_y(100), addr_x(30, 1), addr_x(31, 0),
                  time_low(9), addr_y(2, system=1), addr_x(2047, 1))
    base = 5 << 12
    assert got == [(base + 7, 30, 100, 1), (base + 7, 31, 100, 0), (base + 9, 2047, 2, 1)]
    assert d.time_high_range == (base, 6 << 12) and d.wraps == 0


def test_evt3_time_low_step_back_is_not_an_overflow():
    """A TIME_LOW below the previous one, with no TIME_HIGH between, is a step back in the
    same TIME_HIGH (expelliarmus adds 4096 µs here: its issue #19)."""
    got, _ = evt3(time_high(2861), time_low(100), addr_y(1), addr_x(1, 1), time_low(92),
                  addr_x(2, 1))
    assert [t for t, *_ in got] == [(2861 << 12) + 100, (2861 << 12) + 92]


def test_evt3_time_low_wrap_comes_with_a_new_time_high():
    got, d = evt3(time_high(3), time_low(4095), addr_y(1), addr_x(1, 0), time_high(4),
                  time_low(1), addr_x(2, 0))
    assert [t for t, *_ in got] == [(3 << 12) + 4095, (4 << 12) + 1]
    assert d.time_high_range == (3 << 12, 5 << 12)


def test_evt3_time_high_24_bit_overflow():
    """The 24-bit time base wraps: TIME_HIGH 4095 -> 0 adds 2**24 µs; a small decrease of
    TIME_HIGH is not a wrap (its times run backwards, for the contract to refuse)."""
    got, d = evt3(time_high(4095), time_low(4000), addr_y(0), addr_x(5, 1), time_high(0),
                  time_low(10), addr_x(6, 1))
    assert [t for t, *_ in got] == [(4095 << 12) + 4000, (1 << 24) + 10]
    assert d.wraps == 1 and d.time_high_range == (4095 << 12, (1 << 24) + (1 << 12))
    got, d = evt3(time_high(100), time_low(0), addr_y(0), addr_x(5, 1), time_high(99),
                  addr_x(6, 1))
    assert [t for t, *_ in got] == [100 << 12, 99 << 12] and d.wraps == 0


def test_evt3_vect_12_and_vect_8_advance_the_base():
    got, _ = evt3(time_high(0), time_low(50), addr_y(7), vect_base(100, 1),
                  vect12(0b100000000101),  # pixels 100, 102, 111; base -> 112
                  vect8(0b10000001),  # pixels 112, 119; base -> 120
                  vect12(0),  # nothing; base -> 132
                  vect8(0xF01),  # bits 8-11 are not part of VECT_8: pixel 132 only
                  vect_base(10, 0), vect8(0b10))  # a new base: pixel 11, polarity 0
    assert got == [(50, 100, 7, 1), (50, 102, 7, 1), (50, 111, 7, 1), (50, 112, 7, 1),
                   (50, 119, 7, 1), (50, 132, 7, 1), (50, 11, 7, 0)]


def test_evt3_vector_pixels_past_column_2047_are_dropped_and_counted():
    got, d = evt3(time_high(0), time_low(1), addr_y(3), vect_base(2040, 1),
                  vect12(0xFFF))  # 2040..2051: 2048..2051 lie past the 2048 columns
    assert [x for _, x, _, _ in got] == list(range(2040, 2048)) and d.without_address == 4


def test_evt3_triggers_and_skipped_words():
    got, d = evt3(time_high(1), time_low(3), trigger(5, 1), others(0x123), continued12(0xFFF),
                  continued4(0xF), addr_y(4), addr_x(9, 0), time_low(8), trigger(0, 0))
    assert got == [((1 << 12) + 3, 9, 4, 0)]
    assert d.triggers.tolist() == [((1 << 12) + 3, 5, 1), ((1 << 12) + 8, 0, 0)]


def test_evt3_events_without_a_time_or_an_address_are_counted_not_invented():
    got, d = evt3(addr_y(1), addr_x(1, 1), time_high(2), time_low(0), vect12(0b11),
                  vect_base(0, 0), vect8(1))
    assert got == [(2 << 12, 0, 1, 0)]
    assert (d.before_time_high, d.without_address) == (1, 2)


@pytest.mark.parametrize("word_type", [0x1, 0x9, 0xB, 0xC, 0xD])
def test_evt3_reserved_types_are_refused_at_their_word(word_type):
    with pytest.raises(DecodeProblem, match="word 2 has type") as info:
        decode_evt3(np.array([time_high(0), time_low(0), word_type << 12], np.uint16))
    assert info.value.byte_offset == 4


# ---- EVT 2.0 words (32 bits: type in [31:28]) ------------------------------------------------
def cd(on, t_low, x, y):
    return (int(on) << 28) | (t_low << 22) | (x << 11) | y


def th2(v):
    return (0x8 << 28) | v


def trig2(t_low, channel, value):
    return (0xA << 28) | (t_low << 22) | (channel << 8) | value


def evt2(*words):
    d = decode_evt2(np.array(words, np.uint32))
    return [(int(t), int(x), int(y), int(p)) for t, x, y, p in zip(d.t, d.x, d.y, d.p)], d


def test_evt2_cd_on_off_and_time_high():
    got, d = evt2(cd(True, 1, 5, 6), th2(10), cd(False, 63, 2047, 2047), cd(True, 0, 1, 2),
                  (0xE << 28) | 7, (0xF << 28) | 9, th2(11), cd(True, 2, 3, 4))
    assert got == [((10 << 6) + 63, 2047, 2047, 0), (10 << 6, 1, 2, 1), ((11 << 6) + 2, 3, 4, 1)]
    assert d.before_time_high == 1 and d.time_high_range == (10 << 6, 12 << 6)


def test_evt2_triggers_and_34_bit_wrap():
    got, d = evt2(th2((1 << 28) - 1), trig2(4, 31, 1), cd(False, 0, 0, 0), th2(0),
                  cd(False, 5, 0, 0))
    assert d.triggers.tolist() == [((((1 << 28) - 1) << 6) + 4, 31, 1)]
    assert [t for t, *_ in got] == [((1 << 28) - 1) << 6, (1 << 34) + 5] and d.wraps == 1


def test_evt2_reserved_type_is_refused():
    with pytest.raises(DecodeProblem, match="word 1 has type 0b0010") as info:
        decode_evt2(np.array([th2(0), 0x2 << 28], np.uint32))
    assert info.value.byte_offset == 4
