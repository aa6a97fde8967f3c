"""Upload an exported dataset folder to the Hugging Face Hub (``zuhyo export --push-to-hub REPO``).

Through ``huggingface_hub`` (imported here, lazily): the dataset repository is created when missing, then the card,
the Parquet shards, the statistics and the plots go up in one commit. The save_to_disk copy stays local (the Hub
serves the shards through the card's ``configs``). The endpoint is the library's (``HF_ENDPOINT`` changes it,
e.g. for a private Hub); the token comes from ``token_env`` (default ``HF_TOKEN``) or ``huggingface-cli login``.
"""

from __future__ import annotations

import os
from pathlib import Path

from zuhyo.errors import ZuhyoError

#: What is uploaded: the card and what it shows or points at.
UPLOAD_PATTERNS = ["README.md", "*.parquet", "statistics/*", "plots/*"]


class HubError(ZuhyoError):
    """The Hub refused or could not be reached; the message names the repository."""


def hub_token(repo: str, token_env: str = "HF_TOKEN") -> str:
    """Check ``repo`` and find the token before anything is written: ``token_env``, else the stored login."""
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise HubError(f"--push-to-hub {repo!r}: give a repository as OWNER/NAME")
    try:
        import huggingface_hub
    except ImportError:
        raise HubError("--push-to-hub needs huggingface_hub: pip install 'zuhyo[build]'") from None
    token = os.environ.get(token_env) or huggingface_hub.get_token()
    if not token:
        raise HubError(f"--push-to-hub {repo}: no Hugging Face token (set {token_env} or run "
                       "`huggingface-cli login`)")
    return token


def push_to_hub(folder: Path, repo: str, token: str, *, private: bool = False, message: str | None = None) -> str:
    """Upload ``folder`` (a ``zuhyo export`` output) to the dataset repository ``repo``; returns its URL."""
    import huggingface_hub
    from huggingface_hub.errors import HfHubHTTPError

    api = huggingface_hub.HfApi(token=token)
    try:
        api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
        info = api.upload_folder(repo_id=repo, repo_type="dataset", folder_path=str(folder),
                                 allow_patterns=UPLOAD_PATTERNS,
                                 commit_message=message or f"zuhyo export of {folder.name}")
    except HfHubHTTPError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise HubError(f"--push-to-hub {repo}: the Hub refused the upload: {first}") from None
    except ValueError as e:  # a reply the client cannot read (HfUriError, malformed JSON): not the Hub's API
        raise HubError(f"--push-to-hub {repo}: unexpected reply from {huggingface_hub.constants.ENDPOINT}: "
                       f"{e}") from None
    except OSError as e:  # connection refused, DNS, TLS
        raise HubError(f"--push-to-hub {repo}: cannot reach the Hub ({huggingface_hub.constants.ENDPOINT}): "
                       f"{e}") from None
    return str(getattr(info, "repo_url", None) or f"{huggingface_hub.constants.ENDPOINT}/datasets/{repo}")
