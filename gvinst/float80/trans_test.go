package float80

func modelTrans(e *Env, c refCase, r *refResult, c2 *bool) bool { return false }
