"""RewardMATH (Kim et al. 2024): data preparation, metrics, official-file ingestion and figures.

Nothing here imports torch: scoring goes through the shared engine (`rmeval score`), and this
package only reads its score tables (or the official repository's result files).
"""
