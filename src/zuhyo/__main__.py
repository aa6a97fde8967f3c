"""`python -m zuhyo` = the `zuhyo` command."""

from zuhyo.cli import main

main()
