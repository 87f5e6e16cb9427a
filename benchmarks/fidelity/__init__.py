"""How closely mockserver's replies match recorded real traffic."""
