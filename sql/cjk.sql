-- simhash_v2 / simhash_features_v2: CJK features weighted by
-- min(count, 8), NULL for texts without features; simhash() unchanged.
\pset null '(null)'

-- every existing call form still resolves to simhash(text, integer) and
-- simhash_features(text, integer), with the fingerprints of 1.0
SELECT simhash('The quick brown fox jumps over the lazy dog');
SELECT simhash('The quick brown fox jumps over the lazy dog', 3);
SELECT simhash('The quick brown fox jumps over the lazy dog', "window" => 3);
SELECT simhash(body => '中文的文本，中文的句子。');
SELECT simhash('中文的文本，中文的句子。'::text, 2);
SELECT count(*) FROM simhash_features('中文的文本，中文的句子。');
SELECT count(*) FROM simhash_features('中文的文本，中文的句子。', 2);
SELECT simhash(''), simhash(' ,.;!? ');
SELECT simhash(to_tsvector('simple', 'a b a'));

-- version 2: calls by position and by the non-reserved name "width"
SELECT simhash_v2('The quick brown fox jumps over the lazy dog');
SELECT simhash_v2('The quick brown fox jumps over the lazy dog', 3);
SELECT simhash_v2('The quick brown fox jumps over the lazy dog', width => 3);
SELECT simhash_v2(body => 'The quick brown fox', width => 2);
-- non-CJK text: the same fingerprint as version 1
SELECT simhash_v2(t) = simhash(t) AS same, simhash_v2(t, 2) = simhash(t, 2) AS same2
FROM (VALUES ('The quick brown fox jumps over the lazy dog, the dog, the fox'),
			 ('ÉCOLE Straße İstanbul'), ('a a a a a a a a a a a a b')) AS v(t);
-- CJK text: repeated characters weigh min(n, 8)
SELECT simhash_v2('中文的文本，中文的句子。'), simhash('中文的文本，中文的句子。');
SELECT * FROM simhash_features_v2('中文的文本，中文的句子。的的的的的的的的的 the the');
SELECT * FROM simhash_features('中文的文本，中文的句子。的的的的的的的的的 the the');
-- width 2: shingles of CJK tokens only count as CJK
SELECT * FROM simhash_features_v2('中文中文中文 ab ab 中文', 2);
SELECT * FROM simhash_features_v2('ひらがな한국어ภาษาไทย');
-- simhash_v2 equals simhash_compute over its features and weights
SELECT simhash_v2(t, w) = (SELECT simhash_compute(array_agg(feature), array_agg(weight::real))
						   FROM simhash_features_v2(t, w)) AS equal
FROM (VALUES ('中文的文本，中文的句子。的的的的的的的的的的的的 the the the'),
			 (repeat('汉字汉字，', 40) || repeat('word ', 30)), ('混合 mixed 文本 text')) AS v(t),
	 generate_series(1, 3) AS w;
-- full-width and half-width punctuation, and punctuation alone, are no features
SELECT simhash_v2('中文，文本。（括号）') = simhash_v2('中文,文本.(括号)') AS width_folded;
SELECT simhash_v2('ＦＵＬＬ　ｗｉｄｔｈ') = simhash_v2('full width') AS fullwidth_ascii;
-- texts without features give NULL (version 1 gives 0)
SELECT simhash_v2(''), simhash_v2(' ,.;!?，。！'), simhash_v2('---', 3), simhash_v2(NULL);
SELECT count(*) FROM simhash_features_v2('，。');
SELECT a.t, b.t FROM (VALUES (''), ('...')) AS a(t), (VALUES (''), ('...')) AS b(t)
WHERE simhash_v2(a.t) <~> simhash_v2(b.t) <= 3;
-- bad width
\set VERBOSITY sqlstate
SELECT simhash_v2('a', 0);
\set VERBOSITY default
SELECT simhash_v2('a', 1025);
SELECT * FROM simhash_features_v2('a', 0);
-- in an index expression
CREATE TABLE cjk_docs (id int, body text);
INSERT INTO cjk_docs VALUES (1, '自由软件是指尊重用户自由的软件。'), (2, '自由软件是指尊重用户自由的软件'),
	(3, '完全不同的另一段文字，讲的是别的事情。'), (4, '');
CREATE INDEX ON cjk_docs USING simhash (simhash_v2(body));
SET enable_seqscan = off;
SELECT id FROM cjk_docs WHERE simhash_v2(body) <~> simhash_v2('自由软件是指尊重用户自由的软件！') <= 3 ORDER BY id;
RESET enable_seqscan;
SELECT id, simhash_v2(body) IS NULL AS no_features FROM cjk_docs ORDER BY id;
DROP TABLE cjk_docs;
