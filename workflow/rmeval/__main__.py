from rmeval.cli import main

raise SystemExit(main())
