import pytest

from skcrf import tags_to_spans
from skcrf.metrics import (
    segmentation_scores,
    sequence_accuracy,
    span_f1_score,
    span_precision_recall_fscore,
    token_accuracy,
)


def test_segmentation_scores_hand_computed():
    gold = [["上海", "推", "迎", "奥运"], ["本报讯", "日前"]]
    pred = [["上海", "推迎", "奥运"], ["本报", "讯", "日前"]]
    # right: 上海, 奥运, 日前 -> 3 of 6 gold, 3 of 6 predicted
    train = ["上海", "推", "迎", "日前"]
    s = segmentation_scores(gold, pred, train_words=train)
    assert s["precision"] == pytest.approx(3 / 6)
    assert s["recall"] == pytest.approx(3 / 6)
    assert s["f1"] == pytest.approx(0.5)
    # OOV gold words: 奥运 (found), 本报讯 (missed) -> 1/2; IV: 上海 ok, 推, 迎 missed, 日前 ok
    assert s["oov_rate"] == pytest.approx(2 / 6)
    assert s["oov_recall"] == pytest.approx(1 / 2)
    assert s["iv_recall"] == pytest.approx(2 / 4)
    assert "oov_recall" not in segmentation_scores(gold, pred)


def test_segmentation_scores_checks_text():
    with pytest.raises(ValueError, match="Sentence 0"):
        segmentation_scores([["ab"]], [["a", "c"]])
    with pytest.raises(ValueError):
        segmentation_scores([["ab"]], [])


def test_tags_to_spans_conlleval_rules():
    assert tags_to_spans(5, ["B-PER", "I-PER", "O", "I-LOC", "I-LOC"]) == [
        ("PER", 0, 2), ("LOC", 3, 5)]
    # I- of another type starts a new entity; entity at the end of the sequence
    assert tags_to_spans(3, ["B-PER", "I-ORG", "I-ORG"]) == [("PER", 0, 1), ("ORG", 1, 3)]
    assert tags_to_spans(2, ["B-PER", "B-PER"]) == [("PER", 0, 1), ("PER", 1, 2)]
    assert tags_to_spans(4, ["S-A", "B-B", "E-B", "U-C".replace("U", "S")], "BIOES") == [
        ("A", 0, 1), ("B", 1, 3), ("C", 3, 4)]
    assert tags_to_spans(3, ["U-A", "B-B", "L-B"], "BIOUL") == [("A", 0, 1), ("B", 1, 3)]
    assert tags_to_spans(5, list("BESBE"), "BMES") == [("", 0, 2), ("", 2, 3), ("", 3, 5)]
    with pytest.raises(ValueError, match="length"):
        tags_to_spans(3, ["O"])
    with pytest.raises(ValueError, match="scheme"):
        tags_to_spans(1, ["X-FOO"])


def test_span_f1_hand_computed():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"]]
    pred = [["B-PER", "O", "O", "B-LOC"], ["B-MISC", "O"]]
    # gold: PER(0,2) LOC(3,4) ORG(0,1); pred: PER(0,1) LOC(3,4) MISC(0,1): 1 right
    p, r, f = span_precision_recall_fscore(gold, pred)
    assert (p, r) == (pytest.approx(1 / 3), pytest.approx(1 / 3))
    assert span_f1_score(gold, pred) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="Sequence 1"):
        span_f1_score(gold, [pred[0], ["O"]])


def test_accuracies():
    assert token_accuracy([["a", "b"], ["c"]], [["a", "c"], ["c"]]) == pytest.approx(2 / 3)
    assert sequence_accuracy([["a", "b"], ["c"]], [["a", "c"], ["c"]]) == 0.5
