"""Group fairness on any grouped corpus (`corpus:` in the config): a local table or a Hugging Face dataset of
(prompt, response) rows labelled by group, optionally paired (the same content once per group), written as the
fairness benchmark's `results/data/{group}.parquet` + manifest contract; and the paired (counterfactual) tests."""
