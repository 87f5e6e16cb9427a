import sys

from mockserver.cli import main

sys.exit(main())
