-- simhash_tokens and simhash_shingle
SELECT simhash_tokens('Hello, World! It''s 2024-01-02; e-mail: a.b@c.de');
SELECT simhash_tokens('ÉCOLE Straße ΣΊΣΥΦΟΣ Ǆemal İstanbul');
SELECT simhash_tokens('中文分词测试，标点。English混合');
SELECT simhash_tokens('ひらがな・カタカナー、漢字');
SELECT simhash_tokens('한국어 텍스트');
SELECT simhash_tokens('ภาษาไทย กิน');
SELECT simhash_tokens('ＦＵＬＬ　ｗｉｄｔｈ，１２３');
SELECT simhash_tokens(E'cafe\u0301 na\u00efve');
SELECT simhash_tokens('Ⅻ ①② x² ٣٤ ९');
SELECT simhash_tokens('emoji 😀 between 🎉 words');
SELECT simhash_tokens(''), simhash_tokens(' ,.;!? '), simhash_tokens(NULL);
SELECT cardinality(simhash_tokens(repeat('ab ', 100000)));

SELECT simhash_shingle(ARRAY['a', 'b', 'c', 'd', 'e']);
SELECT simhash_shingle(ARRAY['a', 'b', 'c', 'd', 'e'], 2);
SELECT simhash_shingle(ARRAY['a', 'b', 'c', 'd', 'e'], 1);
SELECT simhash_shingle(ARRAY['a', 'b', 'c', 'd', 'e'], 5);
-- fewer tokens than the window: one shingle of all
SELECT simhash_shingle(ARRAY['a', 'b'], 4);
SELECT simhash_shingle('{}'::text[], 4), simhash_shingle(ARRAY[NULL]::text[], 2);
-- NULL elements are skipped
SELECT simhash_shingle(ARRAY['a', NULL, 'b', 'c'], 2);
SELECT simhash_shingle(simhash_tokens('The quick brown fox jumps'), 3);
SELECT simhash_shingle(simhash_tokens('我们的文档'), 2);
\set VERBOSITY sqlstate
SELECT simhash_shingle(ARRAY['a'], 0);
\set VERBOSITY default
SELECT simhash_shingle(ARRAY['a'], 0);
SELECT simhash_shingle(ARRAY['a'], 1025);
SELECT simhash('a', -1);
