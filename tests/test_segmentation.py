import pytest

from skcrf.segmentation import read_segmented, tags_to_words, words_to_tags


def test_words_to_tags():
    assert words_to_tags(["上海", "推", "迎奥运"]) == list("BESBME")
    assert words_to_tags(["上海", "推", "迎奥运"], scheme="BI") == list("BIBBII")
    with pytest.raises(ValueError):
        words_to_tags(["上海", ""])
    with pytest.raises(ValueError, match="scheme"):
        words_to_tags(["a"], scheme="XYZ")


@pytest.mark.parametrize("words", [["上海", "推", "迎奥运"], ["a"], [], ["１５：０６", "x"]])
@pytest.mark.parametrize("scheme", ["BMES", "BI"])
def test_round_trip(words, scheme):
    text = "".join(words)
    assert tags_to_words(text, words_to_tags(words, scheme)) == words


def test_tags_to_words_is_robust_to_invalid_tags():
    assert tags_to_words("abcd", list("BEME")) == ["ab", "cd"]   # stray M after E
    assert tags_to_words("abc", list("MME")) == ["abc"]          # no B
    assert tags_to_words("abc", list("EEE")) == ["a", "b", "c"]
    assert tags_to_words("abc", list("BBS")) == ["a", "b", "c"]
    with pytest.raises(ValueError):
        tags_to_words("ab", ["B"])


def test_read_segmented(tmp_path):
    p = tmp_path / "seg.txt"
    p.write_text("上海  推 迎\u3000奥运\n\n 本报讯\t日前 \n", encoding="utf-8")
    assert read_segmented(p) == [["上海", "推", "迎", "奥运"], ["本报讯", "日前"]]
