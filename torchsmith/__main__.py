from torchsmith.cli import main

raise SystemExit(main())
