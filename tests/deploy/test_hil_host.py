"""The host's withheld CPU time (steal) from /proc/stat: parsed and shared out."""

import pytest

from sim2real.hil.host import cpu_ticks, steal_share, steal_words

STAT = ('cpu  {user} 10 300 {idle} 20 0 30 {steal} 0 0\n'
        'cpu0 1 2 3 4 5 6 7 8 0 0\nintr 1 2 3\n')


def test_steal_is_the_eighth_field_of_the_cpu_line_over_all_eight(tmp_path):
    """user 1000, nice 10, system 300, idle 500, iowait 20, irq 0, softirq 30, steal 140:
    steal 140 of 2000 ticks; 600 more ticks of which 150 stolen: a 25 % share."""
    path = tmp_path / 'stat'
    path.write_text(STAT.format(user=1000, idle=500, steal=140))
    before = cpu_ticks(path)
    assert before == (140, 2000)
    path.write_text(STAT.format(user=1200, idle=750, steal=290))
    assert steal_share(before, cpu_ticks(path)) == 150 / 600 == 0.25
    assert steal_words(0.25) == ' (the host withheld 25% of the CPU time)'
    assert steal_words(0.01) == '' and steal_words(None) == ''


def test_no_steal_count_is_unknown_not_zero(tmp_path):
    """A missing file, a cpu line without steal, or no time passed: None."""
    assert cpu_ticks(tmp_path / 'absent') is None
    short = tmp_path / 'stat'
    short.write_text('cpu  1 2 3 4\n')
    assert cpu_ticks(short) is None
    assert steal_share(None, (1, 2)) is None and steal_share((1, 2), (1, 2)) is None


def test_this_machine_counts_time_forward():
    """On Linux the real /proc/stat parses, and the total only grows."""
    first = cpu_ticks()
    if first is None:
        pytest.skip('no /proc/stat with a steal count here')
    later = cpu_ticks()
    assert later[1] >= first[1] and 0 <= later[0] <= later[1]
